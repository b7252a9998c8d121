// The native workspace behind each workspace of workspace-search/mastra,
// apart from that entry (which loads Mastra): tenantPool measures such a
// workspace through it without loading Mastra itself.
'use strict'

/** @type {WeakMap<object, import('../index').Workspace>} */
const natives = new WeakMap()

module.exports = { natives }
