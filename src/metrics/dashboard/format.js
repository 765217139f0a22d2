// Numbers as the page shows them; "-" where there is nothing to show. Times
// follow `portico stats`: milliseconds with two or three significant digits.

export function count(n) {
  return n === null || n === undefined ? '-' : Math.round(n).toLocaleString('en-US');
}

export function perSecond(rate) {
  if (rate === null || rate === undefined) return '-';
  return rate < 100 ? rate.toFixed(1) : Math.round(rate).toLocaleString('en-US');
}

export function milliseconds(seconds) {
  if (seconds === null || seconds === undefined) return '-';
  const ms = seconds * 1000;
  if (ms < 1) return ms.toFixed(3);
  if (ms < 10) return ms.toFixed(2);
  if (ms < 100) return ms.toFixed(1);
  return ms.toFixed(0);
}

export function ratio(value) {
  return value === null || value === undefined ? '-' : value.toFixed(2) + '×';
}

// A histogram bucket's bound for a label: "150 µs", "7.5 ms", "2 s".
export function bound(seconds) {
  if (seconds < 1e-3) return Math.round(seconds * 1e6) + ' µs';
  if (seconds < 1) return +(seconds * 1e3).toPrecision(3) + ' ms';
  return +seconds.toPrecision(3) + ' s';
}

// A value in a measure's unit, as the compare view and `portico stats
// --compare` print it.
export function inUnit(value, unit) {
  if (unit === 'seconds') return milliseconds(value);
  if (unit === 'per_second') return perSecond(value);
  return count(value);
}

export function clock(date) {
  return date.toLocaleTimeString('en-GB', { hour12: false });
}
