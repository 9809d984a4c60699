/**
 * The PTX front end's translation to the kernel IR (docs/PTX.md): `translatePtx(module, launch)`.
 */
export { translatePtx, type PtxLaunch, type PtxStats } from './translate.js';
