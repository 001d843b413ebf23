"""The generators' shared way of writing a table into Swift source: entries
joined by ';' into lines of at most about 110 characters, each indented to
sit inside a string literal (App/ConfusableTable.swift, App/TextPropertyTable.swift)."""


def wrapped(entries: list[str]) -> str:
    lines, line = [], ""
    for entry in entries:
        if len(line) + len(entry) > 110:
            lines.append(line)
            line = ""
        line += entry + ";"
    lines.append(line)
    return "\n".join("        " + l for l in lines)
