/**
 * The unstuck core, taken from this repository's `src/core` and bundled into the plugin at build
 * time (see docs/decisions/dsh-bundled-core.md): the plugin installs as one tarball with no
 * dependency on an `unstuck` package. This file is the one place that crosses into the core.
 */

export type { Message, Violation } from '../../../src/core/index.js';
export { check, classifyError, fnv1a, isPairingRule, repair } from '../../../src/core/index.js';
