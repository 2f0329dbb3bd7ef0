import Foundation
import ImagoSandbox
import Testing

@testable import ImagoCodecs

@Suite("CIE lightness tables: L* of sRGB bytes, and bytes with L* changed, against Double arithmetic")
struct CIELightnessTests {
    @Test("L* from the tables is within 0.001 of L* computed in Double, for random colours and every gray")
    func lightness() {
        var generator = SeededGenerator(seed: 0xC1E1)
        let colors = (0..<20_000).map { _ in (0..<3).map { _ in UInt8.random(in: 0...255, using: &generator) } } + (0...255).map { [$0, $0, $0] }
        CIELightness.withTables { tables in
            for color in colors {
                let exact = SharpenTests.lightness(color[0], color[1], color[2])
                #expect(abs(Double(tables.lightness(red: color[0], green: color[1], blue: color[2])) - exact) < 0.001, "\(color)")
                if color[0] == color[1] && color[1] == color[2] {
                    #expect(abs(Double(tables.grayLightness[Int(color[0])]) - exact) < 0.000_1)
                }
            }
        }
    }

    @Test("a change of L* by 0 gives every byte back; other changes match the Double round trip to a byte")
    func change() {
        var generator = SeededGenerator(seed: 0xC1E2)
        CIELightness.withTables { tables in
            for gray in 0...255 {
                #expect(tables.gray(UInt8(gray), changedBy: 0) == UInt8(gray))
            }
            for _ in 0..<5_000 {
                let color = (0..<3).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let same = tables.color(red: color[0], green: color[1], blue: color[2], changedBy: 0)
                #expect([same.0, same.1, same.2] == color)
                let change = Float.random(in: -20...10, using: &generator)
                let changed = tables.color(red: color[0], green: color[1], blue: color[2], changedBy: change)
                let expected = SharpenTests.changed(color, lightnessBy: Double(change))
                #expect(zip([changed.0, changed.1, changed.2], expected).allSatisfy { abs(Int($0) - Int($1)) <= 1 }, "\(color) by \(change)")
            }
        }
    }
}
