export { createEmulator } from './create-emulator.js';
export type { Emulator, EmulatorOptions, EmulatedRequest } from './create-emulator.js';
export { parseScript } from './step.js';
export type { Step, Fault } from './step.js';
