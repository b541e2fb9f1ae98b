// The job summary as a reader sees it: its Markdown rendered by a GitHub-flavoured Markdown
// renderer (marked, which passes inline HTML through unsanitized, so an escaping mistake shows),
// then loaded in headless Chromium. A probe script at the end of the page reports the structure the
// browser built: tables, <details> blocks, and any markup from the cluster that became elements.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { marked } from 'marked'
import { chromiumCandidates, findChromium } from '../cluster/prerequisites.ts'

/** What the probe saw in the browser's DOM. */
export interface RenderedSummary {
  /** Text of the headline (the first <strong>). */
  headline: string
  tables: { columns: string[]; rows: string[][]; codeCells: string[] }[]
  details: { summary: string; open: boolean; pre: string[] }[]
  /** <script> elements besides the probe itself. */
  scripts: number
  /** Elements with an on* attribute, and <img> elements. */
  handlers: number
  images: number
  /** window.pwned: set by any hostile string that ran. */
  pwned: unknown
  /** The height of the page's content, for a screenshot of all of it. */
  height: number
}

const STYLE = `
body { font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; color: #1f2328; margin: 24px; max-width: 1232px; }
h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; }
table { border-collapse: collapse; display: block; overflow: auto; margin: 12px 0; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; text-align: left; vertical-align: top; }
th { font-weight: 600; background: #f6f8fa; }
tr:nth-child(2n) td { background: #f6f8fa; }
code, pre { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; background: #eff1f3; border-radius: 6px; }
code { padding: .2em .4em; }
pre { padding: 12px; overflow: auto; }
details { margin: 8px 0; }
summary { cursor: pointer; }
`

// Runs in the browser: reads the structure it built and writes it as JSON into #probe-result.
const PROBE = `
const text = (e) => e.textContent.trim();
const tables = [...document.querySelectorAll('table')].map((t) => ({
  columns: [...t.querySelectorAll('thead th')].map(text),
  rows: [...t.querySelectorAll('tbody tr')].map((r) => [...r.querySelectorAll('td')].map(text)),
  codeCells: [...t.querySelectorAll('tbody td code')].map(text)
}));
const details = [...document.querySelectorAll('details')].map((d) => ({
  summary: d.querySelector('summary')?.textContent.trim() ?? '',
  open: d.open,
  pre: [...d.querySelectorAll('pre')].map((p) => p.textContent)
}));
const all = [...document.querySelectorAll('*')];
const result = {
  headline: document.querySelector('strong')?.textContent.trim() ?? '',
  tables,
  details,
  scripts: document.querySelectorAll('script:not(#probe)').length,
  handlers: all.filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length,
  images: document.querySelectorAll('img').length,
  pwned: window.pwned ?? null,
  height: Math.ceil(document.body.getBoundingClientRect().bottom) + 24
};
const out = document.createElement('pre');
out.id = 'probe-result';
out.hidden = true;
out.textContent = JSON.stringify(result);
document.body.append(out);
`

/** The summary Markdown as an HTML page, rendered the GitHub-flavoured way. */
export function summaryPage(markdown: string): string {
  const body = marked.parse(markdown, { gfm: true, async: false })
  return `<!doctype html><html><head><meta charset="utf-8"><style>${STYLE}</style></head><body>${body}<script id="probe">${PROBE}</script></body></html>`
}

/** Debian's chromium (or CHROMIUM): the tests need a real browser, and say where none was found. */
export function chromiumPath(): string {
  const found = findChromium()
  if (!found) throw new Error(`no Chromium found (tried ${chromiumCandidates().join(', ')}): apt-get install chromium, or set CHROMIUM`)
  return found
}

// The flags that keep headless Chromium off the network and quick to start as root on CI.
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--hide-scrollbars'
]

/** Runs Chromium on `page` (written to a temporary file) with `args`; returns its standard output. */
function chromium(page: string, args: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'job-sweeper-summary-'))
  try {
    const file = join(dir, 'summary.html')
    writeFileSync(file, page)
    const run = spawnSync(chromiumPath(), [...FLAGS, `--user-data-dir=${join(dir, 'profile')}`, ...args, `file://${file}`], {
      encoding: 'utf8',
      timeout: 60_000,
      maxBuffer: 64 * 1024 * 1024
    })
    if (run.status !== 0) throw new Error(`chromium exited with ${run.status ?? run.signal}: ${run.stderr.slice(-2000)}`)
    return run.stdout
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The width pages are laid out and screenshotted at, in CSS pixels. */
export const PAGE_WIDTH = 1280

/** Loads the page in Chromium and returns what the probe saw in the DOM the browser built. */
export function renderInBrowser(page: string): RenderedSummary {
  const dom = chromium(page, ['--dump-dom', `--window-size=${PAGE_WIDTH},800`])
  const json = /<pre id="probe-result" hidden="">([^<]*)<\/pre>/.exec(dom)?.[1]
  if (json === undefined) throw new Error(`the probe reported nothing; the DOM was:\n${dom.slice(0, 2000)}`)
  const unescape = (s: string): string =>
    s
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&')
  return JSON.parse(unescape(json)) as RenderedSummary
}

/** Screenshots the page at PAGE_WIDTH × `height` CSS pixels into `png`. */
export function screenshot(page: string, png: string, height: number): void {
  chromium(page, [`--screenshot=${png}`, `--window-size=${PAGE_WIDTH},${height}`])
}

/** A PNG's width and height, from its IHDR chunk. */
export function pngSize(png: string): { width: number; height: number } {
  const bytes = readFileSync(png)
  if (bytes.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a') throw new Error(`${png} is not a PNG`)
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) }
}
