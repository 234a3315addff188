/*
 * TEMPORARY: the core's modules imported one by one until src/core/index.ts lands; then this
 * file becomes a re-export of '../core/index.js'.
 */
export { check } from '../core/check.js';
export type { Violation } from '../core/check.js';
export { getProfile } from '../core/profiles.js';
export type { ProfileName } from '../core/profiles.js';
