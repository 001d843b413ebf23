import CGD
import CJpegScale

extension GDImage {
    /// The vignette: each pixel outside an inner ellipse darkened by up to
    /// 60%, growing with the square of its distance towards the corners.
    /// gd has no such filter; this uses its pixel access (deterministic
    /// integer arithmetic, so a reference image holds on every machine).
    func darkenTowardsTheEdges() {
        let w = width, h = height
        guard w > 1, h > 1 else { return }
        let scale = 1 << 16
        // Distances in 1/256ths of the half-width and half-height: 256 at an edge's midpoint.
        let halfW = max(w / 2, 1), halfH = max(h / 2, 1)
        for y in 0..<h {
            let dy = (y - h / 2) * 256 / halfH
            for x in 0..<w {
                let dx = (x - w / 2) * 256 / halfW
                let distance2 = dx * dx + dy * dy          // 65536 at an edge, 131072 at a corner
                let inner = 128 * 128                        // no change within half-way to the edges
                guard distance2 > inner else { continue }
                let falloff = min(distance2 - inner, 131072 - inner) * scale / (131072 - inner) // 0...scale
                let keep = scale - 6 * falloff / 10 * falloff / scale    // 1 - 0.6 f^2, in 1/scale
                let c = ir_gd_truecolor_pixel(pointer, Int32(x), Int32(y))
                let r = Int(ir_gd_red(c)) * keep / scale, g = Int(ir_gd_green(c)) * keep / scale
                let b = Int(ir_gd_blue(c)) * keep / scale
                gdImageSetPixel(pointer, Int32(x), Int32(y), ir_gd_truecolor(Int32(r), Int32(g), Int32(b)))
            }
        }
    }
}
