// Escaping for text that came from the cluster (Job names, reasons, log lines) before it goes
// into the job summary, which GitHub renders as Markdown with inline HTML.

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '|': '&#124;',
  '`': '&#96;',
  '*': '&#42;',
  _: '&#95;',
  '[': '&#91;',
  ']': '&#93;',
  '~': '&#126;',
  '\\': '&#92;'
}

/** Text safe inside a Markdown table cell or paragraph: no markup, no line breaks. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[&<>"'|`*_[\]~\\]/g, (c) => ENTITIES[c]).replace(/\r?\n/g, ' ')
}

/** Text safe inside <pre>: only HTML is special there. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c])
}
