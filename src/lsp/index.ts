/**
 * The language server of the sketch language (`mbsim lsp`, docs/EDITOR.md): the server
 * (`server.ts`), the check's worker thread (`check-thread.ts`), its answers as pure functions (`features.ts`), the names of a sketch
 * (`symbols.ts`), the operations' PTX meaning (`optext.ts`), completion (`complete.ts`) and the checker's hazards as
 * diagnostics (`hazards.ts`).
 */
export { startLanguageServer, type LspOptions } from './server.js';
export { DEFAULT_HAZARD_BOUNDS, hazardDiagnostics, hazardDiagnostic, type HazardBounds, type HazardReport } from './hazards.js';
export { definitionAt, hoverAt, opHover, sketchDiagnostics, toDiagnostic } from './features.js';
export { indexSymbols, definitionOf, referencesOf, wordAt, type SymbolDef, type SymbolIndex, type SymbolWord } from './symbols.js';
export { CheckThread, checkText, hardDeadlineMs, type CheckJob } from './check-thread.js';
export { completionsAt } from './complete.js';
export { opText, describeMnemonic, type OpText } from './optext.js';
