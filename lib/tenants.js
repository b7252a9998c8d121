// `tenantPool({ attach, maxBytes, memoryOf? })`: many tenants' workspaces
// in one process, attached on demand and evicted least recently used when
// their memory (`memoryOf`, default `stats().memoryBytes`) passes `maxBytes`. Eviction is
// `destroy()`, which saves what changed (with `persist`) and releases the
// tenant's memory and mapped files; it runs in the background (`settled()`
// waits for it), and an evicted tenant asked for again is attached once
// its destroy() is done.
'use strict'

const { natives } = require('./natives.js')

/**
 * A workspace's memory by default: its index's, its grep index's and its
 * git history's (its `stats()`), or for one of workspace-search/mastra
 * (Mastra's class, which has none) its native workspace's.
 * @param {any} w
 */
function statsMemory(w) {
  const own = typeof w?.stats === 'function' ? w : natives.get(w)
  if (!own) throw new TypeError('tenantPool: this workspace has no stats(), nor a native workspace behind it: give memoryOf')
  const stats = own.stats()
  return stats.memoryBytes + (stats.grep?.memoryBytes ?? 0) + (stats.history?.memoryBytes ?? 0)
}

/**
 * @template {{ destroy(): Promise<void> }} W
 * @param {{ attach: (tenant: string) => Promise<W>, maxBytes: number, memoryOf?: (workspace: W) => number, onEvictError?: (tenant: string, error: unknown) => void }} options
 */
function tenantPool(options) {
  if (!options || typeof options.attach !== 'function') throw new TypeError('tenantPool needs { attach, maxBytes }')
  const { attach, maxBytes } = options
  const measure = options.memoryOf ?? statsMemory
  if (typeof measure !== 'function') throw new TypeError('tenantPool: memoryOf must be a function')
  // A bound that cannot be measured is an error of that call, never a pool that evicts everything.
  const memoryOf = (/** @type {W} */ w) => {
    const n = measure(w)
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) throw new TypeError(`tenantPool: memoryOf answered ${String(n)}, not a number of bytes`)
    return n
  }
  // An evicted tenant whose last save failed lost writes: never silently.
  const onEvictError =
    options.onEvictError ??
    ((/** @type {string} */ tenant, /** @type {unknown} */ e) =>
      process.emitWarning(`tenantPool: evicting ${tenant} failed: ${e instanceof Error ? e.message : String(e)}`, 'TenantPoolWarning'))
  if (typeof maxBytes !== 'number' || !(maxBytes > 0)) throw new TypeError('tenantPool: maxBytes must be a positive number')
  /** Attached (or attaching) tenants, least recently used first: a Map keeps insertion order. @type {Map<string, Promise<W>>} */
  const live = new Map()
  /** @type {Map<string, number>} */
  const bytes = new Map()
  /** Tenants in use by `use()` now (never evicted while in use). @type {Map<string, number>} */
  const leases = new Map()
  /** Tenants being destroyed: attached again only once that is done (its last save landed). @type {Map<string, Promise<void>>} */
  const closing = new Map()
  /** Their memory, until their destroy() is done. @type {Map<string, number>} */
  const closingBytes = new Map()

  // Evictions run beside the request that caused them: a destroy() may
  // save (a PUT), and no request waits for another tenant's save.
  // The memory of tenants still being destroyed counts toward the bound.
  const evictBeyond = (/** @type {string} */ keep) => {
    const sum = (/** @type {Iterable<number>} */ xs) => [...xs].reduce((a, b) => a + b, 0)
    let total = sum(bytes.values()) + sum(closingBytes.values())
    for (const [tenant, pending] of live) {
      if (total <= maxBytes) break
      if (tenant === keep || !bytes.has(tenant) || leases.has(tenant)) continue
      total -= bytes.get(tenant) ?? 0
      closingBytes.set(tenant, bytes.get(tenant) ?? 0)
      live.delete(tenant)
      bytes.delete(tenant)
      /** @type {Promise<void>} */
      const done = (async () => {
        try {
          await (await pending).destroy()
        } catch (e) {
          try {
            onEvictError(tenant, e)
          } catch (thrown) {
            // Nobody awaits an eviction: a throwing handler must not become an unhandled rejection.
            process.emitWarning(`tenantPool: onEvictError threw: ${thrown instanceof Error ? thrown.message : String(thrown)}`, 'TenantPoolWarning')
          }
        }
      })().finally(() => {
        if (closing.get(tenant) === done) {
          closing.delete(tenant)
          closingBytes.delete(tenant)
        }
      })
      closing.set(tenant, done)
    }
  }

  const pool = {
    /**
     * The tenant's workspace, attached now if it is not (concurrent calls
     * share one attach). It may be evicted once other tenants are attached:
     * hold it across awaits with `use()`.
     */
    async get(/** @type {string} */ tenant) {
      let pending = live.get(tenant)
      if (pending) {
        live.delete(tenant) // most recently used: to the end
        live.set(tenant, pending)
        return pending
      }
      const before = closing.get(tenant)
      /** @type {Promise<W>} */
      const attaching = (before ?? Promise.resolve())
        .then(() => attach(tenant))
        .then(async (workspace) => {
          // Measured inside the attach that every concurrent get() shares: a
          // workspace destroyed here (a bound that cannot be measured, the
          // pool closed meanwhile) is handed to none of them.
          try {
            if (live.get(tenant) !== attaching) throw new Error(`tenantPool: closed while ${tenant} was attaching`)
            bytes.set(tenant, memoryOf(workspace))
          } catch (e) {
            await workspace.destroy().catch(() => {})
            throw e
          }
          return workspace
        })
      live.set(tenant, attaching)
      let workspace
      try {
        workspace = await attaching
      } catch (e) {
        if (live.get(tenant) === attaching) live.delete(tenant)
        throw e
      }
      evictBeyond(tenant)
      return workspace
    },
    /**
     * Runs `fn` with the tenant's workspace, which is not evicted until `fn`
     * settles; then notes its memory (writes may have grown it).
     * @template T
     * @param {string} tenant
     * @param {(workspace: W) => Promise<T>} fn
     */
    async use(tenant, fn) {
      leases.set(tenant, (leases.get(tenant) ?? 0) + 1)
      try {
        return await fn(await pool.get(tenant))
      } finally {
        const n = (leases.get(tenant) ?? 1) - 1
        if (n === 0) leases.delete(tenant)
        else leases.set(tenant, n)
        await pool.touched(tenant)
      }
    },
    /** Notes a tenant's memory after writes to it (evicting others if the bound is passed). */
    async touched(/** @type {string} */ tenant) {
      const pending = live.get(tenant)
      if (!pending) return
      const n = memoryOf(await pending)
      // Evicted while this waited: its memory is no longer the pool's.
      if (live.get(tenant) !== pending) return
      bytes.set(tenant, n)
      evictBeyond(tenant)
    },
    /** Resolves once the evictions under way (their destroy()) are done. */
    async settled() {
      while (closing.size > 0) await Promise.all([...closing.values()])
    },
    /** Tenants attached now, least recently used first. */
    tenants: () => [...live.keys()].filter((t) => bytes.has(t)),
    /** The memory the attached tenants held when last measured. */
    memoryBytes: () => [...bytes.values()].reduce((a, b) => a + b, 0),
    /**
     * Destroys every tenant's workspace (saving what changed); rejects with
     * an AggregateError of the tenants whose destroy() failed (a last save
     * that did not land: writes lost), once all are done.
     */
    async close() {
      const all = [...live.entries()]
      live.clear()
      bytes.clear()
      /** @type {unknown[]} */
      const failed = []
      await Promise.all(
        all.map(async ([tenant, p]) => {
          const workspace = await p.catch(() => null) // an attach that failed has nothing to save
          await workspace?.destroy().catch((e) => failed.push(Object.assign(e instanceof Error ? e : new Error(String(e)), { tenant })))
        }),
      )
      await pool.settled()
      if (failed.length) throw new AggregateError(failed, `tenantPool.close(): ${failed.length} tenant${failed.length === 1 ? '' : 's'} could not be destroyed (${failed.map((e) => /** @type {any} */ (e).tenant).join(', ')}): what changed may not be saved`)
    },
  }
  return pool
}

module.exports = { tenantPool }
