// A benchmark page's rows, when it is opened with ?post=1: `run(post)` POSTs each row to /result under
// `stage`, an error becomes a row of its own, and stage=done ends the browser run
// (../../shared/gpubrowser collects them).
export async function postRows(stage, run) {
  const post = (body) => fetch(`/result?stage=${stage}`, { method: 'POST', body: JSON.stringify(body) });
  try {
    await run(post);
  } catch (error) {
    await post({ kind: 'error', error: String(error?.stack ?? error) });
  }
  await fetch('/result?stage=done', { method: 'POST', body: '{}' });
}
