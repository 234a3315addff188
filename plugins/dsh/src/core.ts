/**
 * The unstuck core, taken from this repository's `src/core` and bundled into the plugin at build
 * time (see docs/decisions/dsh-bundled-core.md): the plugin installs as one tarball with no
 * dependency on an `unstuck` package. This file is the one place that crosses into the core.
 */

// Internal to the core (not on its public entry point): the plugin bundles the core's source, so it takes it from there.
export { fnv1a } from '../../../src/core/ids.js';
export type { Message, Violation } from '../../../src/core/index.js';
export { check, classifyError, isHealableRule, repair } from '../../../src/core/index.js';
