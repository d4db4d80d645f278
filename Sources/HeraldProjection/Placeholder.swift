public enum HeraldProjectionPlaceholder {}
