/// xoshiro256** outputs for seed 7 (SplitMix64 seeding), computed with a separate
/// Python transcription of the reference C code (prng.di.unimi.it).
enum SeededRandomReference {
    static let seed7: [UInt64] = [0xb358faf74ef9765a, 0x475c3d964f482cd2, 0xd6f1d349952c7996]
}
