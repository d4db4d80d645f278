/// Word lists for names and message bodies, so records have realistic sizes and text.
enum Words {
    static let firstNames = [
        "Arseny", "John", "Maria", "Li", "Fatima", "Olga", "Kenji", "Amara", "Lucas", "Noor",
        "Ivan", "Sofia", "Mateo", "Aiko", "Omar", "Elena", "Pavel", "Chloe", "Ravi", "Hana",
    ]
    static let lastNames = [
        "Smirnov", "Doe", "Garcia", "Wei", "Haddad", "Petrova", "Sato", "Okafor", "Silva", "Khan",
        "Ivanov", "Rossi", "Lopez", "Tanaka", "Aziz", "Novak", "Popov", "Martin", "Iyer", "Kim",
    ]
    static let groupNames = [
        "My magical group", "Family", "Book club", "Climbing Saturday", "Team standup",
        "Flat 4B", "Release crew", "Chess night", "Parents of 3A", "Weekend hikes",
    ]
    static let vocabulary = [
        "ok", "see", "you", "at", "the", "station", "tomorrow", "thanks", "sounds", "good",
        "did", "anyone", "bring", "charger", "meeting", "moved", "to", "five", "lol", "photo",
        "call", "me", "when", "free", "running", "late", "sorry", "great", "news", "build",
        "is", "green", "again", "lunch", "pizza", "tonight", "where", "are", "we", "going",
    ]

    static func pick(_ list: [String], _ random: inout SplitMix64) -> String {
        list[Int(random.next() % UInt64(list.count))]
    }

    static func sentence(_ random: inout SplitMix64, words: Int) -> String {
        var text = pick(vocabulary, &random).capitalized
        for _ in 1..<max(words, 1) {
            text += " "
            text += pick(vocabulary, &random)
        }
        return text
    }
}

extension String {
    fileprivate var capitalized: String { prefix(1).uppercased() + dropFirst() }
}
