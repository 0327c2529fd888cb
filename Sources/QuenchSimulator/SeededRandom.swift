/// A small, fast PRNG with the same output on every platform: xoshiro256**
/// (Blackman & Vigna, "Scrambled linear pseudorandom number generators", 2018),
/// seeded through SplitMix64 as its authors recommend. Foundation's and the
/// standard library's generators are not reproducible, so the simulator never uses them.
public struct SeededRandom: RandomNumberGenerator, Sendable, Hashable {
    private var s0, s1, s2, s3: UInt64

    public init(seed: UInt64) {
        var x = seed
        func splitMix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix(); s1 = splitMix(); s2 = splitMix(); s3 = splitMix()
    }

    /// An independent stream for another purpose (e.g. sensor noise apart from behaviour),
    /// so changing one never shifts the other.
    public init(seed: UInt64, stream: UInt64) {
        self.init(seed: seed ^ (stream &* 0xD605_BBB5_8C8A_BC65))
    }

    @inlinable
    static func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    public mutating func next() -> UInt64 {
        let result = Self.rotl(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3
        s2 ^= t
        s3 = Self.rotl(s3, 45)
        return result
    }

    /// Uniform in [0, 1) with 53 random bits.
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// Uniform in [a, b).
    public mutating func uniform(_ a: Double, _ b: Double) -> Double {
        a + (b - a) * unit()
    }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { unit() < p }

    /// Standard normal (Box–Muller; one value per call keeps the state simple).
    public mutating func normal() -> Double {
        let u1 = 1 - unit()  // (0, 1]: log stays finite
        let u2 = unit()
        return (-2 * DeterministicMath.log(u1)).squareRoot() * DeterministicMath.cos(2 * Double.pi * u2)
    }

    /// Lognormal with the given median and log-space standard deviation.
    public mutating func lognormal(median: Double, sigma: Double) -> Double {
        median * DeterministicMath.exp(sigma * normal())
    }

    /// Exponential with the given mean.
    public mutating func exponential(mean: Double) -> Double {
        -mean * DeterministicMath.log(1 - unit())
    }

    /// Log-uniform in [a, b] (a, b > 0): every order of magnitude equally likely.
    public mutating func logUniform(_ a: Double, _ b: Double) -> Double {
        a * DeterministicMath.exp(unit() * DeterministicMath.log(b / a))
    }

    /// Random sign.
    public mutating func sign() -> Double { next() & 1 == 0 ? 1 : -1 }
}

/// exp, log, sin and cos from plain IEEE arithmetic (no libm, no fused
/// multiply-add), so every platform computes bit-identical simulations. Accurate
/// to a few ulp, which is far below anything a sensor shows.
public enum DeterministicMath {
    private static let ln2Hi = 6.93147180369123816490e-01
    private static let ln2Lo = 1.90821492927058770002e-10
    private static let ln2 = 0.6931471805599453

    public static func exp(_ x: Double) -> Double {
        if x.isNaN { return x }
        if x > 709 { return .infinity }
        if x < -745 { return 0 }
        let k = (x / ln2).rounded()
        let r = (x - k * ln2Hi) - k * ln2Lo  // |r| <= 0.35
        // Taylor to r^13/13!: below 1e-17 relative at |r| = 0.35.
        var term = 1.0, sum = 1.0
        for n in 1...13 {
            term = term * r / Double(n)
            sum += term
        }
        return scale(sum, by: Int(k))
    }

    public static func log(_ x: Double) -> Double {
        if x.isNaN || x < 0 { return .nan }
        if x == 0 { return -.infinity }
        if x.isInfinite { return x }
        var e = Int(x.exponent)
        var m = x.significand  // [1, 2)
        if m > 1.4142135623730951 {
            m /= 2
            e += 1
        }
        // log(m) = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.172.
        let s = (m - 1) / (m + 1)
        let s2 = s * s
        var power = s, sum = 0.0
        var n = 1.0
        while n <= 27 {
            sum += power / n
            power *= s2
            n += 2
        }
        return 2 * sum + Double(e) * ln2Hi + Double(e) * ln2Lo
    }

    public static func sin(_ x: Double) -> Double { trig(x, cosine: false) }
    public static func cos(_ x: Double) -> Double { trig(x, cosine: true) }

    private static func trig(_ x: Double, cosine: Bool) -> Double {
        guard x.isFinite else { return .nan }
        // Quadrant reduction: r in [-pi/4, pi/4]. Huge arguments lose accuracy
        // (not determinism); the simulator keeps its phases small.
        let halfPi = Double.pi / 2
        let q = (x / halfPi).rounded()
        let r = x - q * halfPi
        var quadrant = Int(q.truncatingRemainder(dividingBy: 4))
        if quadrant < 0 { quadrant += 4 }
        if cosine { quadrant = (quadrant + 1) % 4 }
        let r2 = r * r
        switch quadrant {
        case 0: return sinSeries(r, r2)
        case 1: return cosSeries(r2)
        case 2: return -sinSeries(r, r2)
        default: return -cosSeries(r2)
        }
    }

    private static func sinSeries(_ r: Double, _ r2: Double) -> Double {
        var term = r, sum = r
        var n = 1.0
        for _ in 0..<9 {
            term = -term * r2 / ((n + 1) * (n + 2))
            sum += term
            n += 2
        }
        return sum
    }

    private static func cosSeries(_ r2: Double) -> Double {
        var term = 1.0, sum = 1.0
        var n = 0.0
        for _ in 0..<9 {
            term = -term * r2 / ((n + 1) * (n + 2))
            sum += term
            n += 2
        }
        return sum
    }

    /// x * 2^k without libm's ldexp, in steps so intermediates stay normal.
    private static func scale(_ x: Double, by k: Int) -> Double {
        var x = x, k = k
        while k > 1000 { x *= 0x1.0p1000; k -= 1000 }
        while k < -1000 { x *= 0x1.0p-1000; k += 1000 }
        return x * Double(sign: .plus, exponent: k, significand: 1)
    }
}
