// Writes docs/summary.png: the job summary of a rich pre phase (test/summary/rich-run.ts) as
// GitHub-flavoured Markdown in headless Chromium. Run by scripts/summary-screenshot.sh.
import { join } from 'node:path'
import { buildReport } from '../../src/report/summary.ts'
import { pngSize, renderInBrowser, screenshot, summaryPage } from './page.ts'
import { richRun } from './rich-run.ts'

const png = process.argv[2] ?? join(import.meta.dirname, '..', '..', 'docs', 'summary.png')
// The failed Job's log tail is shown opened, as a reader who clicked it sees it.
const page = summaryPage(buildReport(richRun()).markdown.replace('<details>', '<details open>'))
const { height } = renderInBrowser(page)
screenshot(page, png, height)
const size = pngSize(png)
console.log(`${png}: ${size.width}×${size.height}`)
