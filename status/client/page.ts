// The status page's script: swaps in the sections streamed from /status/stream (only those whose
// hash changed) and keeps the ages ticking between updates, on the server's clock.

interface StatusMessage {
  generated_at: string;
  state: string;
  sections: Record<string, string>;
  hashes: Record<string, string>;
}

let offset = Date.parse(document.body.dataset.generated ?? '') - Date.now();
const live = document.getElementById('live');
const titles: Record<string, string> = {
  operational: 'Operational',
  degraded: 'Degraded',
  down: 'Down',
  unknown: 'Starting',
};

function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

function tick(): void {
  const now = Date.now() + offset;
  document.querySelectorAll('time[data-age]').forEach((node) => {
    const t = Date.parse(node.getAttribute('datetime') ?? '');
    if (!Number.isNaN(t)) node.textContent = duration((now - t) / 1000) + (node.getAttribute('data-age') ?? '');
  });
}

function setLive(text: string, className: string): void {
  if (!live) return;
  live.textContent = text;
  live.className = className;
}

function connect(): void {
  const source = new EventSource('status/stream');
  source.addEventListener('open', () => setLive('Live', 'on'));
  source.addEventListener('error', () => setLive('Reconnecting…', 'off'));
  source.addEventListener('status', (event) => {
    const msg = JSON.parse((event as MessageEvent<string>).data) as StatusMessage;
    offset = Date.parse(msg.generated_at) - Date.now();
    for (const id of Object.keys(msg.sections)) {
      const section = document.getElementById(id);
      const hash = msg.hashes[id] ?? '';
      if (section && section.getAttribute('data-html') !== hash) {
        // the sections are the server's own rendering (escaped there), as on the first load
        section.innerHTML = msg.sections[id] ?? '';
        section.setAttribute('data-html', hash);
      }
    }
    document.body.setAttribute('data-state', msg.state);
    document.title = `${titles[msg.state] || msg.state} · Transit API status`;
    tick();
  });
}

setInterval(tick, 1000);
connect();
