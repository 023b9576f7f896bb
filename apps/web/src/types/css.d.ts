// Side-effect CSS imports (globals.css), typed even before `next build` writes next-env.d.ts.
declare module '*.css';
