// The MCP client's stdin, cut into lines before the SDK's stdio transport
// reads them. The transport caps its read buffer (10 MiB) and, past the
// cap, closes itself without a word: stdin is paused, nothing keeps the
// process alive and the server exits 0 with the request unanswered. Here a
// line over the cap is dropped as it streams in (never held whole), the
// caller is told, and the lines after it are served as usual.
'use strict'

const { PassThrough } = require('node:stream')

/** Bytes a request line may take, its newline included: the SDK's own default read cap (STDIO_DEFAULT_MAX_BUFFER_SIZE). */
const MAX_LINE = 10 * 1024 * 1024
/** Characters kept of a top-level string or scalar while looking for the id (ids are short). */
const MAX_TOKEN = 256

const QUOTE = 0x22
const BACKSLASH = 0x5c
const isSpace = (b) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09

/**
 * The top-level "id" of a JSON object read in pieces and not kept, so that
 * a dropped request can still be answered (the SDK's client writes the id
 * last, after the params). Tracks nesting and strings only; `id()` is
 * undefined when the line is no object or has no usable id.
 */
class IdScanner {
  constructor() {
    this.depth = 0
    this.object = null // whether the outermost value is an object
    this.inString = false
    this.escaped = false
    this.token = null // bytes of the current top-level key or value, or null when not kept
    this.key = null
    this.inValue = false // after the top-level key's colon
    this.found = undefined
  }

  /** @param {Buffer} bytes */
  feed(bytes) {
    for (let i = 0; i < bytes.length; i++) {
      if (this.inString) this.stringByte(bytes[i])
      else this.structureByte(bytes[i])
    }
  }

  stringByte(b) {
    if (this.escaped) this.escaped = false
    else if (b === BACKSLASH) this.escaped = true
    else if (b === QUOTE) {
      this.inString = false
      if (this.depth === 1) this.endString()
      return
    }
    this.keep(b)
  }

  structureByte(b) {
    if (this.object === null && !isSpace(b)) this.object = b === 0x7b // '{'
    if (b === QUOTE) {
      this.inString = true
      this.token = this.depth === 1 ? [] : null
    } else if (b === 0x7b || b === 0x5b) this.depth++ // '{' '['
    else if (b === 0x7d || b === 0x5d) {
      // '}' ']'
      if (this.depth === 1) this.endScalar()
      this.depth--
    } else if (this.depth !== 1 || !this.object) return
    else if (b === 0x3a) this.inValue = true // ':'
    else if (b === 0x2c) {
      // ','
      this.endScalar()
      this.inValue = false
    } else if (isSpace(b)) this.endScalar()
    else if (this.inValue) {
      if (this.token === null) this.token = []
      this.keep(b)
    }
  }

  keep(b) {
    if (this.token && this.token.length < MAX_TOKEN) this.token.push(b)
  }

  /** A top-level string ended: a key, or the value of "id". */
  endString() {
    if (!this.object) return
    const text = `"${Buffer.from(this.token).toString('utf8')}"`
    this.token = null
    if (!this.inValue) this.key = parseOr(text, null)
    else if (this.key === 'id') this.found = parseOr(text, undefined)
  }

  /** A top-level number (or other bare word) ended. */
  endScalar() {
    if (!this.token) return
    const text = Buffer.from(this.token).toString('latin1')
    this.token = null
    if (this.key === 'id' && /^-?\d+$/.test(text)) this.found = Number(text)
  }

  id() {
    return this.depth === 0 && (typeof this.found === 'string' || Number.isSafeInteger(this.found)) ? this.found : undefined
  }
}

function parseOr(text, fallback) {
  try {
    return JSON.parse(text)
  } catch {
    return fallback
  }
}

/**
 * `input` as a stream of whole lines, each written as one chunk, so the
 * transport's buffer never holds more than one line; a line longer than
 * `maxLine` is dropped and `onOversize(bytes, id)` called once it has ended.
 * @param {NodeJS.ReadableStream} input
 * @param {{ maxLine?: number, onOversize: (bytes: number, id: string | number | undefined) => void }} options
 */
function guardLines(input, { maxLine = MAX_LINE, onOversize }) {
  const output = new PassThrough()
  let pieces = []
  let size = 0
  let dropped = null // { bytes, scanner } while the rest of an oversize line streams by

  const emit = () => {
    const line = Buffer.concat(pieces, size)
    pieces = []
    size = 0
    if (!output.write(line)) {
      input.pause()
      output.once('drain', () => input.resume())
    }
  }
  const endDrop = () => {
    const { bytes, scanner } = dropped
    dropped = null
    onOversize(bytes, scanner.id())
  }
  /** A piece of one line; `ends` when it holds the line's newline. */
  const take = (piece, ends) => {
    if (!dropped && size + piece.length > maxLine) {
      dropped = { bytes: size, scanner: new IdScanner() }
      for (const p of pieces) dropped.scanner.feed(p)
      pieces = []
      size = 0
    }
    if (dropped) {
      dropped.bytes += piece.length
      dropped.scanner.feed(piece)
      if (ends) endDrop()
      return
    }
    pieces.push(piece)
    size += piece.length
    if (ends) emit()
  }

  input.on('data', (chunk) => {
    for (let at = 0; at < chunk.length; ) {
      const newline = chunk.indexOf(0x0a, at)
      const end = newline === -1 ? chunk.length : newline + 1
      take(chunk.subarray(at, end), newline !== -1)
      at = end
    }
  })
  input.on('end', () => {
    if (dropped) endDrop()
    else if (size > 0) emit()
    output.end()
  })
  input.on('error', (err) => output.destroy(err))
  return output
}

module.exports = { guardLines, IdScanner, MAX_LINE }
