import { LinearClassifier } from '../shared/classifiers/linear/model.js';
import { TYPE_MODEL } from '../shared/classifiers/linear/type-model.generated.js';
const c = new LinearClassifier(TYPE_MODEL as any);
for (const x of [
 {title:'We decided to move the nightly job to 2am',body:'Agreed in the ops review.'},
 {title:'!!!',body:'???'},{title:'a',body:'b'},
]) console.log(JSON.stringify(await c.classify(x)));
