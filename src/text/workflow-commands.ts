// Text from the cluster (a pod's log line, an Event's message) printed into a GitHub Actions log
// must never be read by the runner as a workflow command. The runner reads its step's output line
// by line (a line ends at \n, \r or \r\n) and takes a line as a command in two forms
// (actions/runner, ActionCommand.cs): `::name …::data` when the line starts with `::` once its
// leading white space is trimmed (TryParseV2), and the legacy `##[name …]data` anywhere in the
// line (TryParse). Either can set an output, add a mask or stop all commands (`stop-commands`).

/** Zero-width space: breaks a command's marker and is not white space to the runner's TrimStart. */
const BREAK = '\u200b'
/** A line whose first characters, bar what .NET's TrimStart trims, are `::` (JavaScript's \s misses U+0085). */
const LEADING_COLONS = /^([\s\u0085]*):(?=:)/

/**
 * `text` as one line the runner reads no workflow command in: line breaks (\r alone is one to the
 * runner) become spaces, every `##[` and a leading `::` get a zero-width space inside them. What
 * a reader sees is unchanged; the saved log files keep the original bytes.
 */
export function inert(text: string): string {
  return text
    .replace(/\r\n|\r|\n/g, ' ')
    .replace(/##\[/g, `##${BREAK}[`)
    .replace(LEADING_COLONS, `$1:${BREAK}`)
}

/** `text` line by line as inert() makes each (its \n line breaks kept, a lone \r made a space). */
export function inertLines(text: string): string {
  return text
    .split(/\r?\n/)
    .map((line) => inert(line))
    .join('\n')
}
