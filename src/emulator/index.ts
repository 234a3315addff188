export type { EmulatedRequest, Emulator, EmulatorOptions } from './create-emulator.js';
export { createEmulator, wireNames } from './create-emulator.js';
export type { Fault, Step } from './step.js';
export { parseScript } from './step.js';
export type { WireName } from './wire.js';
