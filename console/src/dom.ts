/**
 * The console's one way to make DOM. Every string child becomes a text node and every attribute is set with
 * setAttribute, so text that agents stored (which may hold `<script>` or `<img onerror>`) is always shown as
 * text and never parsed as HTML: the console never hands a string to the HTML parser (a unit test checks).
 */
export type Child = Node | string | number | null | undefined | false;

type Attributes = Record<string, string | number | boolean | null | undefined | EventListener>;

/** An element with attributes (`on…` keys are event listeners; false or null leaves one out) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (value === true) element.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) element.setAttribute(name, String(value));
  }
  append(element, ...children);
  return element;
}

/** Appends children to a node, strings as text. */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces a node's children. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

/** A labelled form field: the label wraps its text and the control, so the two are tied without ids. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLLabelElement {
  return h('label', { class: 'field' }, h('span', { class: 'field-label' }, label), control, hint ? h('span', { class: 'hint' }, hint) : null);
}

/** The value of a named control of a form, trimmed; undefined when empty. */
export function formValue(form: HTMLFormElement, name: string): string | undefined {
  const value = new FormData(form).get(name);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}
