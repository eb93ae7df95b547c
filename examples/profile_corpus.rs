fn main() {
    let corpus = include_str!("../benches/corpus/turns.txt");
    let turns: Vec<&str> = corpus.split("\n=====\n").collect();
    let mut blocks = partner::dialect::BlockRegistry::new();
    for l in ["project_notes", "meeting_notes"] {
        blocks.add(l, false);
    }
    for l in ["persona", "human"] {
        blocks.add(l, true);
    }
    let parser = partner::dialect::DialectParser::new().with_blocks(blocks);
    let mut n = 0;
    for _ in 0..2000 {
        for t in &turns {
            n += parser.parse(t).actions.len();
        }
    }
    println!("{n}");
}
