import * as v from 'valibot'
import { errorMessage, isTeaError, TeaError } from '../../core/errors.ts'
import { isPlainObject } from '../../core/util.ts'
import { defineAction, type ActionContext } from '../types.ts'
import { intervalMs, limiter, reserve } from './limiters.ts'

/** The longest interval a file may ask for (one call a day); a limiter slower than that is a mistake. */
const MAX_INTERVAL_MS = 24 * 60 * 60 * 1000

const rate = v.pipe(v.number(), v.gtValue(0))

const params = v.object({
  action: v.pipe(v.string(), v.description('The action to run, e.g. llm.call.')),
  args: v.optional(v.pipe(v.record(v.string(), v.unknown()), v.description("The action's parameters.")), {}),
  limiter: v.pipe(v.string(), v.minLength(1), v.description('The limiter, shared by every node that names it.')),
  rpm: v.optional(v.pipe(rate, v.description('Calls per minute (when the limiter is new and settings.rate_limiters lacks it).'))),
  rps: v.optional(v.pipe(rate, v.description('Calls per second; wins over rpm.'))),
  timeout: v.optional(v.pipe(v.number(), v.minValue(0), v.description('The longest wait, seconds; past it the call is not made.'))),
})

/**
 * TEA's ratelimit.wrap with its result shape: `{success, result, _ratelimit_waited_ms, _ratelimit_limiter}`, or
 * `success: false` with `error` and `error_type` (`ratelimit_timeout`, `action_error`, `action_not_found`).
 * `settings.rate_limiters: {name: {rpm | rps}}` sets a limiter's rate before any node names it.
 */
export const ratelimitWrap = defineAction({
  name: 'ratelimit.wrap',
  description:
    'Runs an action when the named rate limiter allows (waiting for its slot) and returns {success, result, _ratelimit_waited_ms, _ratelimit_limiter}.',
  params,
  refers: { action: ['action'] },
  async run(p, ctx) {
    const meta = (waited: number): Record<string, unknown> => ({ _ratelimit_waited_ms: waited, _ratelimit_limiter: p.limiter })
    if (p.action === 'ratelimit.wrap')
      return { success: false, error: 'ratelimit.wrap cannot wrap itself', error_type: 'action_error', ...meta(0) }
    // The group loads every action (it dispatches), so the wrapped one is listed when it exists.
    if (!ctx.settings.allow_inline_code && ctx.listActions().find((a) => a.name === p.action)?.runsCode)
      throw new TeaError('INLINE_CODE_FORBIDDEN', `ratelimit.wrap: ${p.action} runs code, which settings.allow_inline_code: false forbids`)
    const configured = configuredRate(ctx, p.limiter)
    const interval = Math.min(intervalMs(configured?.rpm ?? p.rpm, configured?.rps ?? p.rps), MAX_INTERVAL_MS)
    const now = Date.now()
    const l = limiter(p.limiter, interval, now)
    const { waitMs, reserved } = reserve(l, now, p.timeout === undefined ? undefined : p.timeout * 1000)
    if (!reserved)
      return {
        success: false,
        error: `Rate limit wait would exceed timeout (${p.timeout}s). Wait required: ${(waitMs / 1000).toFixed(2)}s`,
        error_type: 'ratelimit_timeout',
        ...meta(waitMs),
      }
    if (waitMs > 0) await sleep(waitMs, ctx.signal)
    try {
      const result = await ctx.invoke(p.action, p.args)
      const success = isPlainObject(result) && typeof result.success === 'boolean' ? result.success : true
      return { success, result, ...meta(waitMs) }
    } catch (e) {
      if (ctx.signal.aborted) throw e
      if (isTeaError(e, 'UNKNOWN_ACTION'))
        return { success: false, error: `Action '${p.action}' not found in registry`, error_type: 'action_not_found', ...meta(waitMs) }
      return { success: false, error: errorMessage(e), error_type: 'action_error', ...meta(waitMs) }
    }
  },
})

/** `settings.rate_limiters[name]`, when the file gives it. */
function configuredRate(ctx: ActionContext, name: string): { rpm?: number; rps?: number } | undefined {
  const all = ctx.settings.sections.rate_limiters
  const one = all && Object.hasOwn(all, name) ? all[name] : undefined
  if (!isPlainObject(one)) return undefined
  const num = (x: unknown): number | undefined => (typeof x === 'number' && x > 0 ? x : undefined)
  return { rpm: num(one.rpm), rps: num(one.rps) }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop)
      resolve()
    }, ms)
    const stop = (): void => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    signal.addEventListener('abort', stop, { once: true })
  })
}
