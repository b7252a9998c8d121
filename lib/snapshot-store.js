// `s3SnapshotStore({ client, bucket, prefix })`: a SnapshotStore over the
// user's own S3Client from the official AWS SDK for JavaScript v3
// (`@aws-sdk/client-s3`, an optional peer dependency, loaded from the
// user's project when this is called): S3, R2, GCS's S3 interface, MinIO
// and other S3-compatible stores. One tenant per prefix.
'use strict'

/**
 * @param {{ client: { send(command: unknown): Promise<any> }, bucket: string, prefix?: string }} options
 * @returns {import('../index').SnapshotStore}
 */
function s3SnapshotStore(options) {
  if (!options || typeof options !== 'object') throw new TypeError('s3SnapshotStore needs { client, bucket, prefix? }')
  const { client, bucket, prefix = '' } = options
  if (!client || typeof client.send !== 'function') throw new TypeError('s3SnapshotStore: client must be an S3Client')
  if (typeof bucket !== 'string' || bucket === '') throw new TypeError('s3SnapshotStore: bucket must be a non-empty string')
  if (typeof prefix !== 'string') throw new TypeError('s3SnapshotStore: prefix must be a string')
  // S3 keeps `a/../b` and `a//b` as they are, but a server or proxy that
  // resolves dot segments or collapses slashes (s3s-fs, a path-normalising
  // gateway) puts one tenant's keys under another's prefix. (The last
  // segment is joined to a key: `x/..` + `manifest.json` is `x/..manifest.json`.)
  if (prefix.split('/').slice(0, -1).some((s) => s === '.' || s === '..' || s === '')) {
    throw new TypeError(`s3SnapshotStore: prefix must have no '.', '..' or empty segment, got ${JSON.stringify(prefix)}: a store that resolves them would keep this tenant under another's keys`)
  }
  /** @type {any} */
  let sdk
  const commands = () => (sdk ??= require('@aws-sdk/client-s3'))
  const Key = (/** @type {string} */ key) => prefix + key
  // A missing bucket is a mistake to report, not an empty tenant.
  const missing = (/** @type {any} */ e) =>
    e?.name !== 'NoSuchBucket' && (e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404)
  const etagOf = (/** @type {any} */ out, /** @type {string} */ what) => {
    if (typeof out?.ETag !== 'string' || out.ETag === '') throw new Error(`s3SnapshotStore: ${what} answered no ETag`)
    return out.ETag
  }
  // A put on condition that the object is as we saw it is refused with 412;
  // S3 answers 404 (NoSuchKey) when the object is gone since: refused too.
  const refused = (/** @type {any} */ e, /** @type {boolean} */ ifMatch) =>
    e?.name === 'PreconditionFailed' || e?.$metadata?.httpStatusCode === 412 || (ifMatch && missing(e))
  return {
    // Where this store keeps the tenant: with cacheDir, a warm attach loads
    // the copy cached for it while the manifest is fetched.
    cacheKey: `s3://${bucket}/${prefix}`,
    async get(key, range) {
      const { GetObjectCommand } = commands()
      const Range = range ? `bytes=${range.start}-${range.end - 1}` : undefined
      try {
        const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: Key(key), Range }))
        return { bytes: await out.Body.transformToByteArray(), etag: etagOf(out, `GetObject ${key}`) }
      } catch (e) {
        if (missing(e)) return null
        throw e
      }
    },
    async put(key, bytes, conditions = {}) {
      const { PutObjectCommand } = commands()
      const input = { Bucket: bucket, Key: Key(key), Body: bytes, IfMatch: conditions.ifMatch, IfNoneMatch: conditions.ifNoneMatch }
      try {
        const out = await client.send(new PutObjectCommand(input))
        return { etag: etagOf(out, `PutObject ${key}`) }
      } catch (e) {
        if (refused(e, conditions.ifMatch !== undefined)) return { conflict: true }
        throw e
      }
    },
    async head(key) {
      const { HeadObjectCommand } = commands()
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: Key(key) }))
        return { etag: etagOf(out, `HeadObject ${key}`), size: Number(out.ContentLength ?? 0) }
      } catch (e) {
        if (missing(e)) return null
        throw e
      }
    },
    async delete(key) {
      const { DeleteObjectCommand } = commands()
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: Key(key) }))
    },
  }
}

module.exports = { s3SnapshotStore }
