// Photos prepared in the browser before they are sent: a smaller copy of a
// large photo (when the person agrees), and the square the stream will show.

/** Photos with a longer side than this are offered a downscaled copy. */
const MAX_SIDE = 2048;
/** The preview square (the server's thumbnail is 180; twice that for sharp screens). */
const PREVIEW_SIDE = 360;

async function bitmap(blob) {
  try {
    return await createImageBitmap(blob, { imageOrientation: 'from-image' });
  } catch {
    return null; // not an image the browser can read: the server will say why
  }
}

function encode(canvas, quality = 0.9) {
  return new Promise((resolve) => canvas.toBlob(resolve, 'image/jpeg', quality));
}

/** A copy no longer than MAX_SIDE on its long side, or null if the photo is small enough. */
export async function downscaled(file) {
  const image = await bitmap(file);
  if (!image) return null;
  const scale = MAX_SIDE / Math.max(image.width, image.height);
  if (scale >= 1) { image.close(); return null; }
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(image.width * scale);
  canvas.height = Math.round(image.height * scale);
  const context = canvas.getContext('2d');
  context.imageSmoothingQuality = 'high';
  context.drawImage(image, 0, 0, canvas.width, canvas.height);
  image.close();
  const blob = await encode(canvas);
  return blob ? { blob, width: canvas.width, height: canvas.height } : null;
}

/** The centre square, as the server crops the thumbnail, as a small JPEG. */
export async function squarePreview(blob) {
  const image = await bitmap(blob);
  if (!image) return null;
  const side = Math.min(image.width, image.height);
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = Math.min(PREVIEW_SIDE, side);
  const context = canvas.getContext('2d');
  context.imageSmoothingQuality = 'high';
  context.drawImage(image, (image.width - side) / 2, (image.height - side) / 2, side, side, 0, 0, canvas.width, canvas.height);
  image.close();
  return encode(canvas);
}
