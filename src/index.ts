export * from './core/index.js';
export type { TokenEstimator, TokenEstimatorOptions } from './core/token-estimate.js';
export { createTokenEstimator, serializedChars } from './core/token-estimate.js';
export type { TrimOptions, TrimResult } from './core/trim.js';
export { TRIMMED_RESULT, trim } from './core/trim.js';
