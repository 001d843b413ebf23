/**
 * The photo sizes a picture is drawn from (docs/API.md, "Photo sizes"):
 * `src`, `srcset` and `sizes` for a grid tile, a search result or the photo
 * view, so that the browser fetches what the screen shows and a phone
 * never downloads the original. A photo without a secret (the original
 * server, or a database before migration 006) keeps the 2012 URLs.
 */
import { API_URL, photoURL, thumbnailURL } from './api.js';

/** The long side (or the square's side) of each size this client uses, by letter. */
const BOUNDS = { s: 75, q: 150, n: 320, z: 640, c: 800, b: 1024 };

/** How each place shows a picture: the sizes offered and how wide it is drawn. */
const PLACES = {
  // A square tile filled by the picture: three a row on a phone, about 240 px on wide screens (app.css).
  tile: { letters: ['q', 'n', 'z'], fill: true, sizes: '(min-width: 600px) 240px, 33vw' },
  result: { letters: ['s', 'q'], fill: true, sizes: '75px' },
  // The photo view: the whole picture, at most the screen's width (the original is never offered).
  viewer: { letters: ['n', 'z', 'c', 'b'], fill: false, sizes: '(min-width: 1100px) 1024px, 100vw' },
};

/** `photos/<server>/<IdPhoto>_<secret>[_<letter>].jpg`, or null for a photo without a secret. */
export function sizeURL(photo, letter) {
  if (!photo.secret || !photo.server) return null;
  const name = `${photo.IdPhoto}_${photo.secret}${letter ? `_${letter}` : ''}.jpg`;
  return `${API_URL}photos/${encodeURIComponent(photo.server)}/${encodeURIComponent(name)}`;
}

/** A size's width and height as the server renders it (never enlarged); null when the photo's are unknown. */
function rendition(photo, letter) {
  const width = Number(photo.width);
  const height = Number(photo.height);
  if (!(width > 0 && height > 0)) return null;
  const bound = BOUNDS[letter];
  if (letter === 's' || letter === 'q') {
    const side = Math.min(bound, width, height);
    return [side, side];
  }
  const long = Math.max(width, height);
  if (long <= bound) return [width, height];
  const scaled = (side) => Math.max(1, Math.round((side * bound) / long));
  return width >= height ? [bound, scaled(height)] : [scaled(width), bound];
}

/** What an <img> in `place` ('tile', 'result' or 'viewer') loads for `photo`. */
export function pictureSources(photo, place) {
  const { letters, fill, sizes } = PLACES[place];
  if (!sizeURL(photo, letters[0])) {
    const src = place === 'viewer' ? photoURL(photo.IdPhoto) : thumbnailURL(photo.IdPhoto);
    return { src, srcset: '', sizes: '' };
  }
  const candidates = [];
  const widths = new Set();
  for (const letter of letters) {
    const size = rendition(photo, letter);
    // Filling a square, a picture's short side is what covers the box.
    const width = size ? (fill ? Math.min(...size) : size[0]) : BOUNDS[letter];
    // A small photo: the larger sizes are the same picture, fetched once.
    if (widths.has(width)) continue;
    widths.add(width);
    candidates.push(`${sizeURL(photo, letter)} ${width}w`);
  }
  return { src: sizeURL(photo, letters[0]), srcset: candidates.join(', '), sizes };
}

/** Points `image` at `photo` for `place` (the srcset first, so a stale one never wins). */
export function showPicture(image, photo, place) {
  const { src, srcset, sizes } = pictureSources(photo, place);
  image.srcset = srcset;
  image.sizes = sizes;
  image.src = src;
}
