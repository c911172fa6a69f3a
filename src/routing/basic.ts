/** The two policies the single-instance path wires; kept under their historical module name. */
export { alwaysAdmit } from './admission.js';
export { roundRobin } from './policies.js';
