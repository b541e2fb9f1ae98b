// The manifest input as Helm prints it, taken as it is. `helm template` prints each file it renders
// after a `# Source: <chart>/<path>` line. `helm install|upgrade --dry-run` prints the release's
// status (Helm 3 and 4: pkg/cmd/status.go, statusPrinter.WriteTable): `NAME:`, `LAST DEPLOYED:`,
// `NAMESPACE:`, `STATUS:`, `REVISION:`, Helm 4's `DESCRIPTION:`, `TEST SUITE:`, then `HOOKS:` and the
// hooks, `MANIFEST:` and the manifest, and `NOTES:` with the chart's notes, which are not YAML.
// helm upgrade puts `Release "x" has been upgraded. Happy Helming!` first, and helm upgrade
// --install of a new release `Release "x" does not exist. Installing it now.`; helm install puts
// nothing. With --debug, a run that is no dry run prints the same sections, under its final STATUS.
import { helmDocuments, type HelmDocument } from './helm-yaml.ts'

/** The Helm command whose status the text prints, as its first line tells: `helm upgrade --install` is one that found no release, and installed it. */
type HelmRun = 'helm install' | 'helm upgrade' | 'helm upgrade --install'

/**
 * What printed the manifest text, as far as the text shows it: `helm template` (`# Source:` lines,
 * no status), a Helm run's status with `--dry-run` (STATUS pending-install or pending-upgrade), the
 * same of a run that was no dry run (its --debug output), or `yaml` (anything else).
 */
export type Renderer = 'helm template' | `${HelmRun} --dry-run` | HelmRun | 'yaml'

/** A manifest input's documents (for Helm's status output, those of its HOOKS: and MANIFEST: sections) and what printed it. */
export interface RenderedText {
  renderer: Renderer
  documents: HelmDocument[]
}

// Helm 4 colours NAMESPACE and STATUS on a terminal, or with --color always.
// eslint-disable-next-line no-control-regex -- an ANSI colour code starts with ESC
const plain = (line: string | undefined): string => (line ?? '').replace(/\x1b\[[0-9;]*m/g, '').trimEnd()

const FIRST_LINE: [RegExp, HelmRun][] = [
  [/^Release ".*" has been upgraded\. Happy Helming!$/, 'helm upgrade'],
  [/^Release ".*" does not exist\. Installing it now\.$/, 'helm upgrade --install']
]

/** The status printout's first lines, if the text starts with one: the command that printed it, and the STATUS. */
function statusHeader(lines: string[]): { run: HelmRun; status: string } | undefined {
  let i = lines.findIndex((l) => plain(l) !== '')
  const run = FIRST_LINE.find(([line]) => line.test(plain(lines[i])))?.[1]
  if (run) i++
  if (!plain(lines[i]).startsWith('NAME: ')) return undefined
  // NAME:, then LAST DEPLOYED: (unless never deployed), NAMESPACE:, STATUS: – nothing a manifest starts with.
  const fields = new Map(lines.slice(i, i + 6).map((l) => plain(l).split(/: (.*)/) as [string, string]))
  const status = fields.get('STATUS')
  return fields.has('NAMESPACE') && status !== undefined ? { run: run ?? 'helm install', status } : undefined
}

/** The documents of a manifest input: helm template output, Helm's --dry-run output, or any multi-document YAML. */
export function renderedDocuments(text: string): RenderedText {
  const lines = text.split('\n')
  const header = statusHeader(lines)
  if (!header) return { renderer: /^# Source: /m.test(text) ? 'helm template' : 'yaml', documents: helmDocuments(text) }

  const hooksAt = lines.findIndex((l) => plain(l) === 'HOOKS:')
  const manifestAt = lines.findIndex((l, i) => i > hooksAt && plain(l) === 'MANIFEST:')
  if (hooksAt < 0 || manifestAt < 0)
    throw new Error(
      `the text is Helm's release status (NAME:, STATUS: ${header.status}) without its HOOKS: and MANIFEST: sections: Helm prints them with --dry-run (or --debug)`
    )
  const notesAt = lines.findIndex((l, i) => i > manifestAt && plain(l) === 'NOTES:')
  // Each section's lines, numbered as in the whole text for error messages.
  const section = (from: number, to: number): HelmDocument[] => helmDocuments(lines.slice(from + 1, to).join('\n'), from + 2)
  const documents = [...section(hooksAt, manifestAt), ...section(manifestAt, notesAt < 0 ? lines.length : notesAt)]
  return { renderer: header.status.startsWith('pending-') ? `${header.run} --dry-run` : header.run, documents }
}
