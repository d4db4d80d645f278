/// The form of a RongCloud account in Herald: `rc:<appKey>|<userId>`, one logged-in user of
/// one RongCloud app. No RongCloud payload names the app key, so every RongCloud payload takes
/// its account from the invocation (`--account`, `account=`).
public enum RongCloudAccount {
    /// The account of `userId` in the app with `appKey`.
    public static func name(appKey: String, userId: String) -> String { "rc:\(appKey)|\(userId)" }

    /// Why `account` cannot be a RongCloud account, or `nil` when it has the form
    /// `rc:<appKey>|<userId>` with both parts non-empty.
    public static func problem(_ account: String?) -> String? {
        guard let account else { return "needs an account rc:<appKey>|<userId> (no RongCloud payload names the app key)" }
        let parts = account.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false)
        guard account.hasPrefix("rc:"), parts.count == 2, parts[0].count > 3, !parts[1].isEmpty else {
            return "account '\(account)' is not rc:<appKey>|<userId>"
        }
        return nil
    }
}
