/**
 * `npm run client:generate`: writes the client package's generated files from the OpenAPI
 * document (client/generated/): `api.ts` (openapi-typescript: request and result types of every
 * operation, webhook payloads), `operations.ts` (each operation's family prefix, method and
 * whether it pages) and the union of error codes. The client imports nothing of the server;
 * test/integration/client-package.test.ts fails when these files are stale. It also writes the entity
 * event names and the operation names out (scripts/client-files.ts `generatedServerFiles`).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatedClientFiles, generatedServerFiles } from './client-files.js';

const dir = join(import.meta.dirname, '..', 'client', 'generated');
for (const [name, text] of Object.entries(await generatedClientFiles())) writeFileSync(join(dir, name), text);
console.log(`client/generated: ${Object.keys(await generatedClientFiles()).join(', ')}`);
for (const [path, text] of Object.entries(generatedServerFiles())) writeFileSync(join(import.meta.dirname, '..', path), text);
console.log(Object.keys(generatedServerFiles()).join(', '));
