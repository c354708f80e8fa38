'use client';
// The app of tests/bundlers/app (copied here as main.js by the build) as a Next.js client component:
// it runs once the page is in the browser, never while Next renders the page on the server.
import { useEffect } from 'react';

export default function Page() {
  useEffect(() => {
    import('./main.js');
  }, []);
  return <p id="out" />;
}
