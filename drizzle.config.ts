import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: ['./src/db/schema.ts', './src/db/flow-schema.ts', './src/db/console-schema.ts'],
  out: './drizzle',
});
