// A scripted language model (the AI SDK's MockLanguageModelV3) for agent
// tests: each step makes the given tool calls, then it answers "done";
// the tool results it was shown are recorded by call id.
import { simulateReadableStream } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }

/** A tool call of a model step. */
export const call = (id, toolName, input) => ({ type: 'tool-call', toolCallId: id, toolName, input: JSON.stringify(input) })

/** `steps`: one array of tool calls per step. Returns { model, results } (results: call id -> tool output). */
export function scriptedModel(steps) {
  const results = {}
  let step = 0
  const next = (prompt) => {
    for (const message of prompt) {
      if (message.role !== 'tool') continue
      for (const part of message.content) results[part.toolCallId] = part.output
    }
    const calls = steps[step++]
    return calls
      ? { content: calls, finishReason: { unified: 'tool-calls', raw: undefined } }
      : { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: undefined } }
  }
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => ({ ...next(prompt), usage, warnings: [] }),
    doStream: async ({ prompt }) => {
      const { content, finishReason } = next(prompt)
      const parts = content.flatMap((c) =>
        c.type === 'text' ? [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: c.text }, { type: 'text-end', id: 't' }] : [c],
      )
      return { stream: simulateReadableStream({ chunks: [{ type: 'stream-start', warnings: [] }, ...parts, { type: 'finish', finishReason, usage }] }) }
    },
  })
  return { model, results }
}
