// Building elements without innerHTML: names from the config (locations,
// upstreams) are text, never markup.

const SVG = 'http://www.w3.org/2000/svg';

function build(element, attributes, children) {
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of [].concat(children ?? [])) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

// el('td', {class: 'n'}, ['12']) -> <td class="n">12</td>
export function el(tag, attributes, children) {
  return build(document.createElement(tag), attributes, children);
}

export function svg(tag, attributes, children) {
  return build(document.createElementNS(SVG, tag), attributes, children);
}

// A table from a header row and body rows; cells are text or elements,
// and a cell given as {text, attrs} carries attributes (data-stat, class).
export function table(headers, rows, attributes) {
  const cell = (tag, value) =>
    value !== null && typeof value === 'object' && !(value instanceof Node)
      ? el(tag, value.attrs, [value.text])
      : el(tag, {}, [value]);
  return el('table', attributes, [
    el('thead', {}, [el('tr', {}, headers.map((h) => cell('th', h)))]),
    el('tbody', {}, rows.map((row) => el('tr', {}, row.map((value) => cell('td', value))))),
  ]);
}
