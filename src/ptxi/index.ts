/**
 * The PTX front end's translation to the kernel IR (docs/PTX.md): `translatePtx(module, launch)`.
 */
export { blockDims, pickEntry, translatePtx, type BlockDims, type PtxLaunch, type PtxStats } from './translate.js';
export { paramKey, paramRef, shortName } from './layout.js';
