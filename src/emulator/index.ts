export { createEmulator, wireNames } from './create-emulator.js';
export type { Emulator, EmulatorOptions, EmulatedRequest } from './create-emulator.js';
export { parseScript } from './step.js';
export type { Step, Fault } from './step.js';
export type { WireName } from './wire.js';
