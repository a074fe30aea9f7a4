/**
 * File types that are binary by nature: a `.gitattributes` line that marks only these `-diff` or `binary`
 * hides no test, and a diff shows them as "Binary files differ" rather than their bytes.
 */
export const BINARY_EXTENSIONS = new Set(
  "png jpg jpeg gif bmp ico icns webp avif tif tiff psd pdf zip gz tgz bz2 xz 7z rar tar jar war whl egg woff woff2 ttf otf eot mp3 mp4 m4a wav ogg oga webm mov avi mkv flac pyc pyo so dylib dll exe bin wasm sqlite sqlite3 db parquet npy npz pkl pickle h5 hdf5 onnx pt ckpt".split(
    " ",
  ),
);

/** Pathspecs (git's glob magic) for every file of those types, anywhere in the tree, upper or lower case. */
export const BINARY_PATHSPECS = [...BINARY_EXTENSIONS].map((extension) => `:(glob,icase)**/*.${extension}`);
