// The command line's progress bar: one line on stderr, redrawn in place,
// fitted to the terminal's width, shown only on a terminal and only once
// indexing has taken more than a moment, cleared before results print.
// (Written here rather than depending on a progress-bar package: library
// users install nothing for it.)
'use strict'

const { escapeControls, keepEnd } = require('./format.js')

/** Milliseconds before the bar appears (quick runs show none). */
const DELAY_MS = 300
/** Redraws per second at most. */
const FRAME_MS = 50

/**
 * The bar's text for `event` in `width` columns: `phase [####----] done/total file`,
 * the file name cut first, then the bar, so the counts always fit.
 * @param {{ phase: string, done: number, total: number, path?: string }} event
 * @param {number} width
 */
function render(event, width) {
  const path = event.path === undefined ? undefined : escapeControls(event.path)
  const counts = ` ${event.done}/${event.total}`
  const head = `${event.phase} `
  const room = width - 1 - head.length - counts.length - 2
  if (room < 4) return `${head}${counts.trim()}`.slice(0, Math.max(0, width - 1))
  const barWidth = Math.min(40, room)
  const filled = event.total > 0 ? Math.round((barWidth * Math.min(event.done, event.total)) / event.total) : 0
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(barWidth - filled)}]`
  const fileRoom = width - 1 - head.length - bar.length - counts.length - 1
  // Cut by the columns it takes (a CJK path was cut by its UTF-16 length: the line wrapped, and each redraw left a row behind).
  const file = path && fileRoom > 3 ? ` ${keepEnd(path, fileRoom)}` : ''
  return `${head}${bar}${counts}${file}`
}

/**
 * `onProgress` for the Workspace and `stop()` to clear the line; does
 * nothing when stderr is not a terminal.
 * @param {NodeJS.WriteStream} stream
 */
function progressBar(stream = process.stderr) {
  if (!stream.isTTY) return { onProgress: undefined, stop() {} }
  const started = Date.now()
  let drawn = false
  let last = 0
  return {
    /** @param {{ phase: string, done: number, total: number, path?: string }} event */
    onProgress(event) {
      const now = Date.now()
      if (now - started < DELAY_MS || (now - last < FRAME_MS && event.done !== event.total)) return
      last = now
      stream.write(`\r\x1b[2K${render(event, stream.columns || 80)}`)
      drawn = true
    },
    stop() {
      if (drawn) stream.write('\r\x1b[2K')
    },
  }
}

module.exports = { progressBar, render }
