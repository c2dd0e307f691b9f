// ESLint for the extension's TypeScript: typescript-eslint's strict, type-checked rules.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.cache/**', '.venv/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    files: ['extension/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      // VS Code's API returns objects typed as its classes (Disposable) that it made itself.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
    },
  },
  {
    // node:test's describe/it return promises the runner awaits itself.
    files: ['extension/test/**/*.ts'],
    // Fakes of async APIs (interpreter lookup, MCP classes) need not await or hold state.
    rules: {
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-extraneous-class': 'off',
    },
  },
);
