import { test } from "vitest";
import { lex } from '../src/lang/lexer.js';
import { parseTokens } from '../src/lang/parser.js';
test("x", () => {
const src = `kernel k arch=sm_90a cluster=2
param S = 2
barrier full[S] count=1
role p warps=1 per=one:
    for i in range(0, 4):
        s = i % S
        mbarrier.try_wait.parity full[s], ((i / S) & 1) ^ 1
        mbarrier.arrive empty[s]@(1 - cta)
        tok = mbarrier.arrive full[0]
        if s == 1:
            exit
        else:
            work 10
    tcgen05.mma acc[0], A[s], B[s] shape=128x128x64
`;
const l = lex(src, 'x.mbk');
console.log(l.diagnostics, l.tokens.map(t=>t.tokenType.name+':'+t.image).join(' '));
const p = parseTokens(l.tokens);
console.log(p.errors);
console.log(JSON.stringify(p.cst).length);
});
