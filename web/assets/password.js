// The password as the 2012 app sends it (LoginScreen.m): the lower-case hex
// SHA-1 of the typed password followed by the salt compiled into the app.
// The browser sends this value, never the typed password (reused on other
// sites), except once to upgrade an account this page made before it did
// (app.js). Computed here, not with crypto.subtle: that exists only on
// HTTPS and localhost pages, and the app's server is often plain HTTP.

const SALT = 'adlfu3489tyh2jnkLIUGI&%EV(&0982cbgrykxjnk8855';

/** SHA-1 (FIPS 180-4) of bytes, as 40 lower-case hex digits. */
export function sha1Hex(bytes) {
  const length = bytes.length;
  const padded = new Uint8Array(((length + 8) >> 6) + 1 << 6);
  padded.set(bytes);
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
  view.setUint32(padded.length - 4, (length << 3) >>> 0);
  const h = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
  const w = new Uint32Array(80);
  for (let block = 0; block < padded.length; block += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(block + 4 * i);
    for (let i = 16; i < 80; i++) {
      const x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16];
      w[i] = (x << 1) | (x >>> 31);
    }
    let [a, b, c, d, e] = h;
    for (let i = 0; i < 80; i++) {
      const [f, k] = i < 20 ? [(b & c) | (~b & d), 0x5a827999]
        : i < 40 ? [b ^ c ^ d, 0x6ed9eba1]
          : i < 60 ? [(b & c) | (b & d) | (c & d), 0x8f1bbcdc]
            : [b ^ c ^ d, 0xca62c1d6];
      const t = (((a << 5) | (a >>> 27)) + f + e + k + w[i]) >>> 0;
      e = d; d = c; c = (b << 30) | (b >>> 2); b = a; a = t;
    }
    h[0] = (h[0] + a) >>> 0; h[1] = (h[1] + b) >>> 0; h[2] = (h[2] + c) >>> 0;
    h[3] = (h[3] + d) >>> 0; h[4] = (h[4] + e) >>> 0;
  }
  return h.map((word) => word.toString(16).padStart(8, '0')).join('');
}

/** What the app sends as `password` for what was typed (UTF-8, as the app encodes it). */
export function appPassword(typed) {
  return sha1Hex(new TextEncoder().encode(typed + SALT));
}
