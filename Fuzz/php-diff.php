<?php
// Reads the FUZZ_DUMP=1 lines of the strings, json and urlencoded harnesses
// (kind \t hex(input) \t our result) and recomputes each with PHP itself.
// Prints every disagreement; exits 1 if there was one. Used by php-diff.sh.
$lines = 0; $diffs = 0; $skipped = 0; $shown = [];
function report($kind, $in, $ours, $php) {
    global $diffs, $shown;
    $diffs++;
    if (($shown[$kind] ?? 0) >= 15) return;
    $shown[$kind] = ($shown[$kind] ?? 0) + 1;
    printf("%-9s input %s\n          ours %s\n          php  %s\n", $kind, json_encode($in, JSON_INVALID_UTF8_SUBSTITUTE), $ours, $php);
}
while (($line = fgets(STDIN)) !== false) {
    $f = explode("\t", rtrim($line, "\n"));
    if (count($f) < 2 || !in_array($f[0], ['urldecode', 'intcast', 'json', 'form'], true)) continue;
    $lines++;
    $in = hex2bin($f[1]);
    switch ($f[0]) {
    case 'urldecode':
        $php = bin2hex(urldecode($in));
        if ($php !== $f[2]) report('urldecode', $in, json_encode(hex2bin($f[2]), JSON_INVALID_UTF8_SUBSTITUTE), json_encode(urldecode($in), JSON_INVALID_UTF8_SUBSTITUTE));
        break;
    case 'intcast':
        $php = (string)(int)$in;
        if ($php !== $f[2]) report('intcast', $in, $f[2], $php);
        break;
    case 'json':
        $php = json_encode($in, JSON_PARTIAL_OUTPUT_ON_ERROR);
        if (bin2hex($php) !== $f[2]) report('json', $in, hex2bin($f[2]), $php);
        break;
    case 'form':
        // parse_str() stops at a NUL byte ($_POST does not), and our names
        // are Strings (invalid UTF-8 repaired): compare only where neither
        // matters.
        if (strpos($in, "\0") !== false) { $skipped++; break; }
        parse_str($in, $out);
        foreach ($out as $k => $v) if (!preg_match('//u', (string)$k)) { $skipped++; break 2; }
        $php = [];
        foreach ($out as $k => $v) $php[] = is_array($v) ? bin2hex((string)$k) . '[]' : bin2hex((string)$k) . '=' . bin2hex($v);
        $ours = array_slice($f, 2);
        sort($php, SORT_STRING); sort($ours, SORT_STRING);
        if ($php !== $ours) {
            $show = function ($tokens) {
                return implode(' ', array_map(function ($t) {
                    if (substr($t, -2) === '[]') return json_encode(hex2bin(substr($t, 0, -2)), JSON_INVALID_UTF8_SUBSTITUTE) . '[]';
                    [$k, $v] = explode('=', $t) + [1 => ''];
                    return json_encode(hex2bin($k), JSON_INVALID_UTF8_SUBSTITUTE) . '=' . json_encode(hex2bin($v), JSON_INVALID_UTF8_SUBSTITUTE);
                }, $tokens));
            };
            report('form', $in, $show($ours), $show($php));
        }
        break;
    }
}
printf("php-diff: %d results compared with PHP %s (%d not comparable), %d differ%s\n", $lines - $skipped, PHP_VERSION, $skipped, $diffs,
       $diffs > 15 ? " (first 15 of each kind shown)" : "");
exit($diffs ? 1 : 0);
