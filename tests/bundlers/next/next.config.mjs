// A static export (out/), served like the other apps.
export default { output: 'export' };
