import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (holds package-lock.json) and the handlers' folder the registry is relative to. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const FUNCTIONS_DIR = path.join(REPO_ROOT, 'functions');
