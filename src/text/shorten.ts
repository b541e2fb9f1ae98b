// Text shortened to fit a line or a cell: a long quote cut with an ellipsis, a set shown by its
// first few names. Output does not grow with the number of Jobs.

/** `text`, cut to at most `max` characters when it is longer, the last of them an ellipsis. */
export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}

/** How many names someNames shows before its ellipsis. */
export const NAMES_SHOWN = 3

/** "a, b, c …": the first few names of a set, and an ellipsis when there are more. */
export function someNames(names: Iterable<string>): string {
  const shown: string[] = []
  let more = false
  for (const n of names) {
    if (shown.length === NAMES_SHOWN) {
      more = true
      break
    }
    shown.push(n)
  }
  return `${shown.join(', ')}${more ? ' …' : ''}`
}
