#!/usr/bin/env python3
"""gen-text-properties.py - writes Sources/IReporterKit/App/TextPropertyTable.swift,
the Unicode properties TextRules reads to tell visible text from text that
hides (docs/SECURITY.md, "Text that hides or impersonates").

Everything comes from Unicode's own data files, as Debian's `unicode-data`
package installs them under /usr/share/unicode (apt-get install unicode-data;
needed only to run this script, never to build or test):

  UnicodeData.txt          General_Category (Cc, Cf, Co, Cs, Cn, Zl, Zp),
                           Canonical_Combining_Class 9 (virama)
  PropList.txt             White_Space, Bidi_Control, Prepended_Concatenation_Mark
  DerivedCoreProperties    Default_Ignorable_Code_Point
  extracted/DerivedJoiningType.txt   Joining_Type (for ZWJ / ZWNJ in context)
  emoji/emoji-data.txt     Extended_Pictographic, Emoji_Modifier
  emoji/emoji-variation-sequences.txt   the characters that take FE0E / FE0F

The one list that is not a Unicode property: BLANK_LOOKALIKES, characters
drawn as nothing at all that Unicode files as graphic symbols. The table is
pinned to the data's version (a Swift toolchain upgrade does not move the
rule); run the script again to move it, then commit the Swift file:

    python3 scripts/gen-text-properties.py [/usr/share/unicode]
"""
import re
import sys
from pathlib import Path

from swift_literal import wrapped

OUT = Path(__file__).resolve().parent.parent / "Sources/IReporterKit/App/TextPropertyTable.swift"

# Drawn blank, yet neither White_Space nor Default_Ignorable: a name of one,
# or a name with one added, reads as another name (issue 26). The Hangul
# fillers (U+115F, U+1160, U+3164, U+FFA0) are Default_Ignorable already;
# the script checks that.
BLANK_LOOKALIKES = {
    0x2800: "BRAILLE PATTERN BLANK (the braille cell with no dots)",
    0x1D159: "MUSICAL SYMBOL NULL NOTEHEAD",
}
ALSO_BLANK_BUT_IGNORABLE = [0x115F, 0x1160, 0x3164, 0xFFA0]

# Bit -> (Swift name, what it means). The Swift OptionSet is written from this.
CLASSES = [
    ("control", "General_Category Cc, Zl or Zp, or Bidi_Control: breaks lines or reorders text"),
    ("ignorable", "Default_Ignorable_Code_Point or General_Category Cf, except the visible Prepended_Concatenation_Mark signs"),
    ("whiteSpace", "White_Space"),
    ("blankLookalike", "Drawn blank though not White_Space (BLANK_LOOKALIKES in the script)"),
    ("unassignedOrPrivate", "General_Category Cn, Co or Cs"),
    ("extendedPictographic", "Extended_Pictographic (emoji, and the code points kept for future ones)"),
    ("emojiModifier", "Emoji_Modifier (skin tones)"),
    ("emojiVariationBase", "Takes FE0E / FE0F (emoji-variation-sequences.txt)"),
    ("virama", "Canonical_Combining_Class 9"),
    ("joinsForward", "Joining_Type L or D"),
    ("joinsBackward", "Joining_Type R or D"),
    ("joinTransparent", "Joining_Type T"),
]
BIT = {name: 1 << i for i, (name, _) in enumerate(CLASSES)}
MAX = 0x110000


def ranges(path: Path, wanted):
    """(first, last, value) of a UCD `code(..code) ; value` file."""
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = [f.strip() for f in line.split(";")]
        code, value = fields[0], fields[1]
        if value not in wanted:
            continue
        first, _, last = code.partition("..")
        yield int(first, 16), int(last or first, 16), value


def version(path: Path) -> str:
    match = re.search(r"(\d+\.\d+\.\d+)", path.read_text(encoding="utf-8").splitlines()[0])
    return match.group(1) if match else "?"


def table(ucd: Path) -> tuple[list[int], str]:
    bits = [0] * MAX

    def mark(first, last, bit):
        for cp in range(first, last + 1):
            bits[cp] |= bit

    category = ["Cn"] * MAX
    pending = None
    for line in (ucd / "UnicodeData.txt").read_text(encoding="utf-8").splitlines():
        fields = line.split(";")
        cp, name, gc, ccc = int(fields[0], 16), fields[1], fields[2], int(fields[3])
        if name.endswith(", First>"):
            pending = cp
            continue
        first = pending if name.endswith(", Last>") else cp
        pending = None
        for c in range(first, cp + 1):
            category[c] = gc
        if ccc == 9:
            mark(first, cp, BIT["virama"])
    for cp, gc in enumerate(category):
        if gc in ("Cc", "Zl", "Zp"):
            bits[cp] |= BIT["control"]
        elif gc == "Cf":
            bits[cp] |= BIT["ignorable"]
        elif gc in ("Cn", "Co", "Cs"):
            bits[cp] |= BIT["unassignedOrPrivate"]
    for first, last, _ in ranges(ucd / "DerivedCoreProperties.txt", {"Default_Ignorable_Code_Point"}):
        mark(first, last, BIT["ignorable"])
    for first, last, value in ranges(ucd / "PropList.txt", {"White_Space", "Bidi_Control", "Prepended_Concatenation_Mark"}):
        for cp in range(first, last + 1):
            if value == "White_Space":
                bits[cp] |= BIT["whiteSpace"]
            elif value == "Bidi_Control":
                bits[cp] = (bits[cp] | BIT["control"]) & ~BIT["ignorable"]
            else:
                bits[cp] &= ~BIT["ignorable"]
    for cp in BLANK_LOOKALIKES:
        assert not bits[cp] & (BIT["whiteSpace"] | BIT["ignorable"]), f"{cp:X} is covered by a property now"
        bits[cp] |= BIT["blankLookalike"]
    for cp in ALSO_BLANK_BUT_IGNORABLE:
        assert bits[cp] & BIT["ignorable"], f"{cp:X} is no longer Default_Ignorable"
    for first, last, value in ranges(ucd / "emoji/emoji-data.txt", {"Extended_Pictographic", "Emoji_Modifier"}):
        mark(first, last, BIT["extendedPictographic" if value == "Extended_Pictographic" else "emojiModifier"])
    for line in (ucd / "emoji/emoji-variation-sequences.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            bits[int(line.split()[0], 16)] |= BIT["emojiVariationBase"]
    joining = {"L": BIT["joinsForward"], "R": BIT["joinsBackward"], "D": BIT["joinsForward"] | BIT["joinsBackward"],
               "T": BIT["joinTransparent"]}
    for first, last, value in ranges(ucd / "extracted/DerivedJoiningType.txt", set(joining)):
        mark(first, last, joining[value])
    # Surrogates cannot be a Unicode.Scalar: leave them out of the table.
    for cp in range(0xD800, 0xE000):
        bits[cp] = 0
    return bits, version(ucd / "PropList.txt")


def encode(bits: list[int]) -> tuple[int, str]:
    entries, cp = [], 0
    while cp < MAX:
        value = bits[cp]
        end = cp
        while end + 1 < MAX and bits[end + 1] == value:
            end += 1
        if value:
            entries.append(f"{cp:X}" + (f"-{end:X}" if end != cp else "") + f":{value:X}")
        cp = end + 1
    return len(entries), wrapped(entries)


def main() -> int:
    ucd = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/unicode")
    bits, unicode_version = table(ucd)
    count, literal = encode(bits)
    options = "\n".join(f"    /// {doc}.\n    static let {name} = TextCharacterClasses(rawValue: 1 << {i})"
                        for i, (name, doc) in enumerate(CLASSES))
    blanks = ", ".join(f"U+{cp:04X} {name}" for cp, name in BLANK_LOOKALIKES.items())
    OUT.write_text(f"""// Generated by scripts/gen-text-properties.py from the Unicode {unicode_version} data files
// (Debian's unicode-data): do not edit by hand. {count} ranges.

/// What `TextRules` needs to know of a character, from Unicode's properties.
/// The one addition is the blank look-alikes: {blanks}.
struct TextCharacterClasses: OptionSet {{
    let rawValue: UInt16

{options}
}}

enum TextPropertyTable {{
    static let unicodeVersion = "{unicode_version}"

    /// The classes of `scalar` (empty: an ordinary visible character).
    static func classes(of scalar: Unicode.Scalar) -> TextCharacterClasses {{
        let value = scalar.value, ranges = Self.ranges
        var low = 0, high = ranges.count
        while low < high {{
            let middle = (low + high) / 2
            if ranges[middle].last < value {{ low = middle + 1 }} else {{ high = middle }}
        }}
        guard low < ranges.count, ranges[low].first <= value else {{ return [] }}
        return TextCharacterClasses(rawValue: ranges[low].classes)
    }}

    private struct Range {{
        let first: UInt32, last: UInt32, classes: UInt16
    }}

    private static let ranges: [Range] = entries.split(separator: ";").map {{ entry in
        let parts = entry.split(separator: ":")
        let bounds = parts[0].split(separator: "-").map {{ UInt32($0, radix: 16)! }}
        return Range(first: bounds[0], last: bounds.last!, classes: UInt16(parts[1], radix: 16)!)
    }}

    private static let entries = \"\"\"
{literal}
        \"\"\".filter {{ !$0.isWhitespace }}
}}
""")
    print(f"wrote {OUT} ({count} ranges, Unicode {unicode_version})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
