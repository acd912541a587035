// DOM building for the dashboard. Data only ever becomes text nodes or attribute values (el and
// svg below); no HTML is parsed anywhere in the client.
import { fmtTime } from './format.ts';

const SVG_NS = 'http://www.w3.org/2000/svg';

export type Child = Node | string | number | null | undefined | false;
export type Children = Child | Child[];
/**
 * `text` sets textContent, on… functions become listeners, the rest attributes (null, undefined and false: left out).
 */
export type Attrs = Record<string, unknown> | null;

/** The element with this id; the page shell has every id the script uses. */
export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`#${id} is missing from the page`);
  return node as T;
}

function setAttrs(node: Element, attrs: Attrs | undefined): void {
  if (!attrs) return;
  for (const name of Object.keys(attrs)) {
    const value = attrs[name];
    if (value === null || value === undefined || value === false) continue;
    if (name === 'text') node.textContent = String(value);
    else if (name.slice(0, 2) === 'on' && typeof value === 'function')
      node.addEventListener(name.slice(2), value as EventListener);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
}

function append(node: Node, children: Children | undefined): void {
  if (children === null || children === undefined) return;
  for (const child of Array.isArray(children) ? children : [children]) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** An element; strings among the children become text nodes. */
export function el(tag: string, attrs?: Attrs, children?: Children): HTMLElement {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

export function svg(tag: string, attrs?: Attrs, children?: Children): SVGElement {
  const node = document.createElementNS(SVG_NS, tag) as SVGElement;
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

export function fill(node: Element, children: Children): void {
  node.replaceChildren();
  append(node, children);
}

export function timeEl(iso: string | null | undefined): HTMLElement | string {
  return iso ? el('time', { datetime: iso, title: iso, text: fmtTime(iso) }) : '—';
}

/** A section's error line (problem title and detail), or none; its own child, not a form's message. */
export function sectionError(id: string, message: string | null | undefined): void {
  const line = document.querySelector<HTMLElement>(`#${id} > .error`);
  if (!line) return;
  line.textContent = message || '';
  line.hidden = !message;
}
