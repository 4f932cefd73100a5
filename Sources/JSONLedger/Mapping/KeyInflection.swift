/// How model names and JSON keys are turned into each other.
enum KeyInflection {
  /// `listImageURL` → `list_image_url`, `URLPath` → `url_path`, `userID` → `user_id`,
  /// `line2Text` → `line2_text`: an uppercase run is one word (an acronym), and its last
  /// letter starts the next word when a lowercase letter follows.
  static func snakeCased(_ name: String) -> String {
    let characters = Array(name)
    var output = ""
    for (index, character) in characters.enumerated() {
      if character.isUppercase, index > 0 {
        let previous = characters[index - 1]
        let next = index + 1 < characters.count ? characters[index + 1] : nil
        // An acronym's plural `s` stays with it (`plannedToIDs` → `planned_to_ids`).
        let afterNext = index + 2 < characters.count ? characters[index + 2] : nil
        let isPluralS = next == "s" && (afterNext.map { !$0.isLowercase } ?? true)
        let startsWord =
          previous.isLowercase || previous.isNumber
          || (previous.isUppercase && (next?.isLowercase ?? false) && !isPluralS)
        if startsWord, previous != "_" { output.append("_") }
      }
      output.append(contentsOf: character.lowercased())
    }
    return output
  }

  /// The form used to compare a JSON key with a name case-insensitively: lowercased,
  /// underscores removed (`first_name`, `firstName` and `FirstName` all give `firstname`).
  static func normalized(_ key: String) -> String {
    String(key.lowercased().filter { $0 != "_" })
  }

  /// The JSON key for a model name in a key case.
  static func jsonKey(for name: String, keyCase: KeyCase) -> String {
    keyCase == .snakeCase ? snakeCased(name) : name
  }

  /// A naive English plural for collection keys: `band` → `bands`, `category` →
  /// `categories`, `box` → `boxes`; `Preferences` stays as it is.
  static func plural(_ name: String) -> String {
    // Already plural (`Preferences`, `Settings`): kept. `-ss`, `-us` and `-is` are singulars
    // (`Address`, `Status`, `Analysis`).
    if name.hasSuffix("s"), !name.hasSuffix("ss"), !name.hasSuffix("us"), !name.hasSuffix("is"), name.count > 3 {
      return name
    }
    if name.hasSuffix("y"), let before = name.dropLast().last, !"aeiou".contains(before) {
      return name.dropLast() + "ies"
    }
    if name.hasSuffix("s") || name.hasSuffix("x") || name.hasSuffix("ch") || name.hasSuffix("sh") { return name + "es" }
    return name + "s"
  }

  /// A naive singular for Rails-style `<singular>_ids` keys: `notes` → `note`,
  /// `categories` → `category`, `boxes` → `box`.
  static func singular(_ name: String) -> String {
    if name.hasSuffix("ies"), name.count > 3 { return String(name.dropLast(3)) + "y" }
    if name.hasSuffix("sses") || name.hasSuffix("xes") || name.hasSuffix("ches") || name.hasSuffix("shes") {
      return String(name.dropLast(2))
    }
    if name.hasSuffix("s"), !name.hasSuffix("ss"), name.count > 1 { return String(name.dropLast()) }
    return name
  }

  /// The reserved JSON words that name an entity-qualified attribute
  /// (`description` → `bandDescription` on `Band`).
  static let reservedWords = ["description", "type", "signed"]
}
