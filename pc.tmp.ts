import { recordPrefixes, recordWords } from './shared/search/index.js';
const w = recordWords({ text: ['Maria', 'Gonzalez', 'Acme Corporation', 'Engineer'], emails: ['maria.gonzalez.123@example12.com'], domains: [], phones: ['+1 (555) 123-4567'] });
console.log([...w]); const p = recordPrefixes(w); console.log(p.length, p);
